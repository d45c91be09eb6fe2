"""quotagov.commands."""
