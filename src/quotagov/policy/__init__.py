"""quotagov.policy."""
