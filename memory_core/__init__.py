"""lcm-proxy's memory engine: evidence capture, extraction, assembly and search.

Never imports aiohttp (DESIGN §1): the proxy package owns all HTTP.
"""

from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.errors import MemoryError_, NotFoundError, SchemaTooNewError, StoreError
from memory_core.models import CaptureResult, CaptureTicket, Scope
from memory_core.store.migrations import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "CaptureResult",
    "CaptureTicket",
    "Engine",
    "MemoryConfig",
    "MemoryError_",
    "NotFoundError",
    "SchemaTooNewError",
    "Scope",
    "StoreError",
]
