"""Replay of workload traces (SWF) through any scheduler on the mock
broker: the reader (:mod:`.swf`) and the runner (:mod:`.runner`)."""
