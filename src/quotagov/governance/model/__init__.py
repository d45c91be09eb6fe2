"""The items quotagov stores, as typed records shared by the use cases and the adapters
(the job record, the escalation record, the impact preview)."""
