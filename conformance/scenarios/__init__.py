"""Declarative RFC 27 scenarios: the YAML language (:mod:`.schema`,
:mod:`.reader`), the runner (:mod:`.runner`), its expectation checks
(:mod:`.checks`) and the library of scenario files (``library/``)."""
