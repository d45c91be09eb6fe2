"""quotagov_tools.commands."""
