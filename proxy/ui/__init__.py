"""The web inspector at ``/lcm/ui`` (server-rendered HTML, no scripts).

Same access rule as the admin API (``proxy.handlers.access.require_admin``); a
browser that cannot send a bearer header signs in through a form that sets an
HttpOnly session cookie, signed with the token and valid for
``proxy.ui_session_seconds``, and signs out with a button (``proxy.ui.signin``).
Every stored string is escaped, and a strict Content-Security-Policy (no scripts at
all) backs the escaping up. The changes it makes, retracting an item and restoring
one, need a CSRF token (``proxy.ui.pages.retract``).
"""

from proxy.ui import pages, requests

ROUTES = pages.ROUTES + requests.ROUTES

__all__ = ["ROUTES"]
