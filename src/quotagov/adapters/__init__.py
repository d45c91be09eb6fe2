"""quotagov.adapters."""
