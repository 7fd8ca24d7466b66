"""lcm-proxy: a transparent OpenAI-compatible sidecar with lossless conversation memory."""

__version__ = "0.1.0"

__all__ = ["__version__"]
