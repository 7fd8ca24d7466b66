"""``python -m proxy`` runs the ``lcm-proxy`` command line."""

from proxy.cli import main

main()
