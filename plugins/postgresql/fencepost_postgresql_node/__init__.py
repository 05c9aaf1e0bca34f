"""The PostgreSQL node launcher: what each node's process runs before it becomes ``postgres`` itself.

Standard library only, so that it runs wherever the node runs (a container has python3 and this folder,
nothing of Fencepost's). See :mod:`fencepost_postgresql_node.__main__`.
"""
