"""quotagov's tools: the CLI, the local runtime, the simulated Batch, the what-if and the
deploy checks. They import the Lambda runtime (:mod:`quotagov`); it never imports them."""
