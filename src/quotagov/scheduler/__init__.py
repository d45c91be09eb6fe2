"""quotagov.scheduler."""
