"""The embedded local runtime: ``template.yaml`` in one process (moto, simulated Batch).

Entry point: :class:`quotagov_tools.local.runtime.LocalRuntime` (with
:class:`~quotagov_tools.local.runtime.RuntimeOptions`), used by ``quotagov demo``, ``serve``
and ``invoke`` and the tests. One module per concern:

- the template and its resources: :mod:`.stack` (functions, triggers, intrinsics),
  :mod:`.provision` (the resources in moto, the values the runtime supplies);
- the parts AWS plays: :mod:`.invoker` (Lambda: a handler run with its template
  environment), :mod:`.lambda_events` (event and context shapes), :mod:`.api_gateway`
  (request -> REST proxy event -> response), :mod:`.delivery` (the event bus, SQS
  event source mappings, async invocations, schedules), :mod:`.eventbus` (rules in
  moto), :mod:`.batch_setup` (the simulated Batch), :mod:`.cloudtrail` (CloudTrail
  events for mutating Batch calls);
- around it: :mod:`.reads` (what an operator would look at), :mod:`.fake_slack` and
  :mod:`.slack_clicks` (Slack's side), :mod:`.http_server` (``quotagov serve``),
  :mod:`.demo_driver` and :mod:`.demo_story` (``quotagov demo``).

Nothing is imported here, so importing one module (the fake Slack, say) does not
start the rest.
"""
