"""The policy suite's independent models of the textbook policies."""
