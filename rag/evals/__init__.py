"""The eval harness: question sets, evaluators, a runner, reports and the baseline gate."""
