"""Container probes: ``python -m proxy.probe livez|readyz|health``.

Asks the proxy in this network namespace for ``/lcm/<name>`` and exits 0 when it
answers 200, 1 otherwise (a 503, a refused connection, no answer within the
timeout), with the reason on stderr. Meant for Docker ``HEALTHCHECK`` and
Kubernetes ``exec`` probes of a proxy that listens on the pod's loopback only,
where the kubelet's ``httpGet`` probes (sent to the pod IP) cannot reach it.

Address: ``LCM_HOST`` when it names a loopback address, else ``127.0.0.1`` (a
proxy bound to ``0.0.0.0`` answers there too); port ``LCM_PORT`` (default 8787);
timeout ``LCM_PROBE_TIMEOUT_SECONDS`` (default 3). Only the standard library is
imported, so a probe costs a bare interpreter start (no settings, no engine).
"""

from __future__ import annotations

import ipaddress
import os
import sys
import urllib.error
import urllib.request

PROBES = ("livez", "readyz", "health")


def probe_url(name: str, environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The URL probe ``name`` asks. Raises ``ValueError`` for a name not in ``PROBES``."""
    if name not in PROBES:
        raise ValueError(f"unknown probe {name!r}; expected one of {', '.join(PROBES)}")
    env = os.environ if environ is None else environ
    host = env.get("LCM_HOST", "").strip()
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    port = env.get("LCM_PORT", "").strip() or "8787"
    return f"http://{host}:{port}/lcm/{name}"


def main(argv: list[str] | None = None) -> int:
    """Run one probe; return the exit status (0 healthy, 1 not, 2 usage error)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in PROBES:
        print(f"usage: python -m proxy.probe {'|'.join(PROBES)}", file=sys.stderr)
        return 2
    url = probe_url(args[0])
    try:
        timeout = float(os.environ.get("LCM_PROBE_TIMEOUT_SECONDS", "") or 3)
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback
            status = resp.status
    except urllib.error.HTTPError as exc:
        print(f"{url}: HTTP {exc.code} {exc.read(500).decode(errors='replace')}",
              file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"{url}: {exc}", file=sys.stderr)
        return 1
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
