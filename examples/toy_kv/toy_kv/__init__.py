"""toy-kv: a toy primary-backup key-value store (:mod:`toy_kv.server`) and its Fencepost plugin
(:mod:`toy_kv.plugin`), the smallest complete example of testing your own system with Fencepost."""
