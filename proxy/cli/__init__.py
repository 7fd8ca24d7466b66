"""The ``lcm-proxy`` command line (click): the root group and its command tree.

Each family of commands lives in a module of its own, defined at module level;
this module only assembles the tree:

- ``serve`` (:mod:`proxy.cli.serving`), with the checks it runs before anything
  heavy opens (:mod:`proxy.cli.preflight`);
- ``memory status|export|inspect|explain`` (:mod:`proxy.cli.inspection`),
  ``memory search`` (:mod:`proxy.cli.searching`), ``memory retract``,
  ``memory restore``, ``memory edit`` and ``memory prefs …``
  (:mod:`proxy.cli.curation`), ``memory purge``, ``memory redact`` and ``reindex``
  (:mod:`proxy.cli.maintenance`);
- ``doctor`` (:mod:`proxy.cli.doctor`);
- ``migrate`` (:mod:`proxy.cli.migration`): the embedded store into PostgreSQL;
- ``bench …`` (:mod:`proxy.cli.benchmarks`), ``eval …`` (:mod:`proxy.cli.evaluations`);
- what they share: settings, the store, options, output (:mod:`proxy.cli.common`).

Answers go to stdout (JSON with ``--json``, else plain text that pastes into a
bug report); ``--output FILE`` writes a file. Diagnostics go to stderr. Exit
status 2 for bad usage or settings, a data dir that holds no store (read
commands never create one) or is unusable, a busy port or data dir.
"""

from __future__ import annotations

import click

from proxy import __version__
from proxy.cli import (
    benchmarks,
    curation,
    doctor,
    evaluations,
    inspection,
    maintenance,
    migration,
    searching,
    serving,
)

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lcm-proxy")
def main() -> None:
    """lcm-proxy: a transparent OpenAI-compatible proxy with lossless memory."""


main.add_command(serving.serve)

main.add_command(inspection.memory)
for _command in (inspection.memory_status, inspection.memory_export,
                 inspection.memory_inspect, inspection.memory_explain,
                 inspection.memory_tenant,
                 searching.memory_search, curation.memory_retract, curation.memory_restore,
                 curation.memory_edit,
                 curation.memory_prefs, maintenance.memory_purge,
                 maintenance.memory_redact):
    inspection.memory.add_command(_command)
for _command in (curation.prefs_set, curation.prefs_list, curation.prefs_delete):
    curation.memory_prefs.add_command(_command)

main.add_command(maintenance.reindex)
main.add_command(doctor.doctor)
main.add_command(migration.migrate)

main.add_command(benchmarks.bench)
for _command in (benchmarks.bench_all, benchmarks.bench_proxy, benchmarks.bench_short,
                 benchmarks.bench_context, benchmarks.bench_search, benchmarks.bench_history,
                 benchmarks.bench_store, benchmarks.bench_upstream):
    benchmarks.bench.add_command(_command)

main.add_command(evaluations.eval_group)
evaluations.eval_group.add_command(evaluations.eval_locomo)
del _command
