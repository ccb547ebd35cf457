"""Helpers for the planner tests: a planner on a uniform machine at a
frozen time, requests, started jobs, the ranks an R holds, and a logger
with a level threshold."""

from __future__ import annotations

import math

import pytest
from flux.idset import IDset
from flux.resource import ResourcePool

from flux_sched_base.planner import Planner
from mock_broker.jobspec import make_jobspec
from mock_broker.machine import Machine
from mock_broker.runtime.clock import VirtualClock

INF = math.inf
NOW = 1000.0


@pytest.fixture(autouse=True)
def frozen_time():
    with VirtualClock(NOW).active():
        yield


def make_planner(nodes=4, cores=4, gpus=0, pool_class=ResourcePool):
    pool = pool_class(Machine.uniform(nodes, cores, gpus).to_R())
    planner = Planner(pool)
    planner.begin_pass(NOW)
    return pool, planner


def request(pool, nodes=None, slots=1, cores=4, duration=100.0, **kw):
    return pool.parse_resource_request(
        make_jobspec(nodes=nodes, slots=slots, cores=cores, duration=duration, **kw)
    )


def run(planner, pool, jobid, **kw):
    R = planner.start_now(jobid, request(pool, **kw), ignore_reservations=True)
    assert R is not None
    return R


def ranks_of(R):
    ranks = set()
    for entry in R.to_dict()["execution"]["R_lite"]:
        ranks.update(IDset(entry["rank"]))
    return ranks


class ThresholdLog:
    """A logger with a level threshold, as flux-python's BrokerLogger:
    keeps the lines its level lets through."""

    def __init__(self, level):
        self.level = level
        self.lines = []

    def __call__(self, level, text):
        if level <= self.level:
            self.lines.append(text)
