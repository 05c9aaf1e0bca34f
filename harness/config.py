"""A test's definition: what runs, against what, with which faults, for how long, from which seed."""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TestConfig:
    """Everything that defines a test run; stored whole as the run's test.json.

    Attributes:
        system: the system under test (an installed plugin, ``fencepost systems``); "" for the default one
            (:func:`harness.system_choice.default_system`), which the config then names.
        workload: register, log, set or bank.
        nemesis: fault package names; empty for no faults.
        nodes: number of data nodes.
        backend: where the processes run: local or docker.
        time_limit: seconds of the main phase.
        concurrency: client workers.
        rate: target operations per second across all workers (0 = as fast as possible).
        seed: seeds the op generator and the nemesis schedule; the same seed gives the same schedule.
        nemesis_interval: seconds between fault actions.
        recovery: seconds to let the system recover after healing, before the final reads.
        bug: the system's known-unsafe modes to switch on (``--list-bugs``).
        name: the test's name in the run store.
        options: the system's own options by name (``--option NAME=VALUE``), as its plugin declares them
            (:class:`harness.plugin_api.SystemOption`; ``fencepost systems`` lists them). A run fills in the
            declared defaults, so test.json holds every option it ran with.
        extra: free-form settings for backends and packages.
    """

    __test__ = False  # not a pytest test class

    system: str = ""
    workload: str = "register"
    nemesis: list[str] = field(default_factory=list)
    nodes: int = 3
    backend: str = "local"
    time_limit: float = 30.0
    concurrency: int = 10
    rate: float = 200.0
    seed: int = field(default_factory=lambda: secrets.randbelow(2**31))
    nemesis_interval: float = 5.0
    recovery: float = 5.0
    bug: list[str] = field(default_factory=list)
    name: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.system:
            from harness.system_choice import default_system

            self.system = default_system()
        if not self.name:
            faults = "+".join(self.nemesis) if self.nemesis else "none"
            bug = f"-bug-{'+'.join(self.bug)}" if self.bug else ""
            self.name = f"{self.system}-{self.workload}-{faults}{bug}"

    def to_dict(self) -> dict[str, Any]:
        """The config as test.json holds it."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestConfig:
        """Read a config back, ignoring fields this version does not know."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
