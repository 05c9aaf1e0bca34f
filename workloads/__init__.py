"""Workloads: clients and generators that drive the system and record histories."""
