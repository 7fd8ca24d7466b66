"""The web inspector at ``/lcm/ui`` (server-rendered HTML, no scripts).

Same access rule as the admin API (``proxy.handlers.admin.require_admin``); a browser
that cannot send a bearer header signs in once through a form that sets an HttpOnly
cookie holding an HMAC of the token. Every stored string is escaped, and a strict
Content-Security-Policy (no scripts at all) backs the escaping up. The one change it
makes, retracting an item, needs a CSRF token (``proxy.ui.pages.retract``).
"""

from proxy.ui import pages, requests

ROUTES = pages.ROUTES + requests.ROUTES

__all__ = ["ROUTES"]
