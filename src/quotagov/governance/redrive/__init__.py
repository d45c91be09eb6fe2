"""Replaying what is parked: the redrive use case."""
