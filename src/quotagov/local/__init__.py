"""quotagov.local."""
