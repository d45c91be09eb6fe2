"""REST routes, one Powertools ``Router`` per feature (``router`` in each module).

Routes only parse, call a use case and shape the reply; the rules live in
``quotagov.governance``.
"""
