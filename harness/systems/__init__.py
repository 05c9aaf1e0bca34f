"""Systems under test: the plugin API (:mod:`harness.systems.api`) and the system adapters that ship with
Fencepost, each one package shaped as an outside plugin would be (``reference``: the store in ``system/``)."""
