"""``fencepost bench spark``: the Spark engine against the local engine on one generated history.

Arguments (after ``fencepost bench spark``): ``--ops N`` (default 1,000,000), ``--keys K`` (10,000),
``--anomalies A`` (3), ``--master URL`` (``local[2]``), ``--path FILE.parquet`` (check this file
instead of generating one; it is kept), ``--spark-only`` (skip the local engine, for histories too
big for one process's memory), ``--apply-in-pandas`` (also time the same check written as
``groupBy(key).applyInPandas``, the alternative to the engine's ``repartition(key)`` + ``mapInArrow``),
``--no-stats`` (skip the Spark SQL statistics).

Each of ``runs`` rounds checks the file with the local engine (``check_file``, every core,
``--all-violations``) and then with the Spark engine on one SparkSession started beforehand (its
start-up is reported apart). Peak memory is the largest sum of RSS over this process and all its
descendants (the JVM and its Python workers included), sampled every 0.2 s during the Spark checks;
it includes what the local engine's run left in this process, so use ``--spark-only`` for Spark's
own figure. CPU time is user and system time of the same process tree (exited children included);
``local_cpu_per_wall`` near the number of cores means the local engine kept them all busy. Then the
Spark SQL statistics of the history (latency quantiles per f and outcome, throughput per second, both
per fault window) are computed once and timed (``stats``, ``stats_s``). The last line is one JSON
object of medians, with the load average before and after.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness.cli.bench_cmd import bench_option


def _tree_rss() -> int:
    """Bytes resident in this process and all its descendants."""
    return _tree()[0]


def tree_cpu() -> float:
    """CPU seconds (user and system) used so far by this process and all its descendants, those that
    have exited and been waited for included."""
    return _tree()[1]


def _tree() -> tuple[int, float]:
    """Resident bytes and CPU seconds of this process and all its descendants, from ``/proc``."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    cpu: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * page
        cpu[pid] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    total, ticks, todo = 0, 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        ticks += cpu.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total, ticks / os.sysconf("SC_CLK_TCK")


class PeakMemory:
    """Samples :func:`_tree_rss` in a thread; ``peak`` is the largest sample since :meth:`reset`."""

    def __init__(self, every: float = 0.2) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.peak = max(self.peak, _tree_rss())

    def reset(self) -> None:
        """Start a new peak."""
        self.peak = _tree_rss()

    def stop(self) -> None:
        """Stop sampling."""
        self._stop.set()
        self._thread.join()


def apply_in_pandas_seconds(spark: Any, path: str, model_name: str = "register") -> tuple[float, list[Any]]:
    """Check ``path`` with ``groupBy(key).applyInPandas`` instead; the seconds and the invalid keys."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from checkers.spark import task
    from checkers.spark.engine import COLUMNS, read_history

    checker = task.make_checker(model_name, None, None, True)
    schema = task.verdict_schema()

    def per_key(pdf: Any) -> Any:
        batch = pa.RecordBatch.from_pandas(pdf.sort_values("index")[list(COLUMNS)], preserve_index=False)
        return pa.Table.from_batches(list(checker(iter([batch]))), schema=schema).to_pandas()

    t = time.monotonic()
    df = read_history(spark, path).filter(F.col("process") != "nemesis")
    rows = df.groupBy("key").applyInPandas(per_key, task.spark_ddl()).filter(F.col("valid") == "false").collect()
    return time.monotonic() - t, sorted(json.loads(r["key"]) for r in rows)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def _stats(spark: Any, path: str) -> dict[str, Any]:
    """The Spark SQL statistics of the history (:func:`checkers.spark.stats.history_stats`), timed."""
    from checkers.spark.stats import history_stats

    t = time.monotonic()
    stats = history_stats(spark, path)
    seconds = round(time.monotonic() - t, 2)
    print(f"spark sql stats in {seconds} s: throughput {stats['throughput']}", flush=True)
    return {"stats_s": seconds, "stats": stats}


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def main(runs: int = 3, args: list[str] | None = None) -> None:
    """Run the benchmark and print progress, then one JSON line of figures."""
    from checkers.linearizability.run import FileOptions, check_file
    from checkers.spark.engine import check_file_spark, get_session, stop_session

    args = args or []
    ops = int(bench_option(args, "--ops", "1000000") or 0)
    keys = int(bench_option(args, "--keys", "10000") or 0)
    anomalies = int(bench_option(args, "--anomalies", "3") or 0)
    master = bench_option(args, "--master", "local[2]")
    given = bench_option(args, "--path", None)
    spark_only = "--spark-only" in args
    apply_s: list[float] = []
    figures: dict[str, Any] = {"bench": "spark", "master": master, "cores": os.cpu_count(), "runs": runs,
                               "load_before": _load()}
    tmp = tempfile.TemporaryDirectory(prefix="fencepost-bench-spark-")
    try:
        if given:
            path = given
            injected = None
        else:
            from checkers.gen_history import HistoryGenerator
            from harness.history.parquet import write_parquet

            path = str(Path(tmp.name) / "history.parquet")
            gen = HistoryGenerator(ops, keys=keys, anomalies=anomalies, seed=42)
            t = time.monotonic()
            events = write_parquet(gen, path)
            injected = sorted(gen.injected)
            figures.update(generate_s=round(time.monotonic() - t, 2), events=events)
            print(f"generated {ops} ops ({events} events, {keys} keys) in {figures['generate_s']} s", flush=True)
        figures["file_mb"] = round(os.path.getsize(path) / 2**20, 1)
        memory = PeakMemory()
        t = time.monotonic()
        spark = get_session(master)
        figures["session_start_s"] = round(time.monotonic() - t, 2)
        opts = FileOptions(all_violations=True)
        local_s: list[float] = []
        spark_s: list[float] = []
        peaks: list[int] = []
        agree = True
        summary: dict[str, Any] = {}
        local_cpu: list[float] = []
        spark_cpu: list[float] = []
        for i in range(max(1, runs)):
            if not spark_only:
                c, t = tree_cpu(), time.monotonic()
                local = check_file(path, opts)
                local_s.append(time.monotonic() - t)
                local_cpu.append(tree_cpu() - c)
            memory.reset()
            c, t = tree_cpu(), time.monotonic()
            report = check_file_spark(path, opts, spark=spark)
            spark_s.append(time.monotonic() - t)
            spark_cpu.append(tree_cpu() - c)
            peaks.append(memory.peak)
            if "--apply-in-pandas" in args:
                seconds, keys_found = apply_in_pandas_seconds(spark, path, report.summary.get("model", "register"))
                apply_s.append(seconds)
                agree = agree and sorted(map(repr, keys_found)) == sorted(map(repr, report.summary["invalid_keys"]))
                print(f"run {i + 1}: groupBy().applyInPandas {seconds:.1f} s", flush=True)
            summary = report.summary
            got = sorted(map(repr, summary.get("invalid_keys", [])))
            if not spark_only:
                agree = agree and got == sorted(map(repr, local.summary["invalid_keys"]))
            if injected is not None:
                agree = agree and got == sorted(map(repr, injected))
            print(f"run {i + 1}: spark {spark_s[-1]:.1f} s (cpu {spark_cpu[-1]:.1f} s)"
                  + ("" if spark_only else f", local {local_s[-1]:.1f} s (cpu {local_cpu[-1]:.1f} s)")
                  + f", invalid keys {summary.get('invalid_keys')}, load {_load()}", flush=True)
        memory.stop()
        if "--no-stats" not in args:
            figures.update(_stats(spark, path))
        figures.update(spark_cpu_s=_median(spark_cpu), spark_cpu_per_wall=_median(
            [c / max(w, 1e-9) for c, w in zip(spark_cpu, spark_s, strict=True)]))
        if local_cpu:
            figures.update(local_cpu_s=_median(local_cpu), local_cpu_per_wall=_median(
                [c / max(w, 1e-9) for c, w in zip(local_cpu, local_s, strict=True)]))
        figures.update(
            ops=summary.get("ops"), partitions=summary.get("partitions"), valid=summary.get("valid"),
            invalid_keys=summary.get("invalid_keys"), agree=agree,
            spark_s=round(statistics.median(spark_s), 2), spark_runs_s=[round(s, 2) for s in spark_s],
            spark_peak_rss_mb=round(max(peaks) / 2**20),
        )
        if apply_s:
            figures.update(apply_in_pandas_s=round(statistics.median(apply_s), 2),
                           ratio_apply_in_pandas_to_map_in_arrow=round(
                               statistics.median(apply_s) / statistics.median(spark_s), 2))
        if local_s:
            figures.update(local_s=round(statistics.median(local_s), 2), local_runs_s=[round(s, 2) for s in local_s],
                           ratio_spark_to_local=round(statistics.median(spark_s) / statistics.median(local_s), 2))
    finally:
        stop_session()
        tmp.cleanup()
    figures["load_after"] = _load()
    print(json.dumps(figures), flush=True)
