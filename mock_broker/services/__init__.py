"""Broker services other than the job-manager: ``resource.acquire`` and
the KVS."""
