"""What a researcher reads about submissions: the job view, the team list, the
resubmission chain and why a job waits."""
