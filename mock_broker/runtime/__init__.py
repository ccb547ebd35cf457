"""The broker runtime: the broker, its reactor and virtual clock, module
hosting, the transcript, and the observer hooks a judge attaches to."""
