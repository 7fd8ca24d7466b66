"""HTTP handlers: chat completions, transparent pass-through, and /lcm/ admin routes."""
