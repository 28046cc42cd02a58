#!/usr/bin/env python3
"""The M/D/1 queue of crates/sim/examples/md1 in SimPy, for comparison.

Same model and parameters as the Rust example: Poisson arrivals with mean
interarrival time 1250 us, one FIFO server with deterministic service
D = 1000 us (rho = 0.8), CUSTOMERS customers from an empty system until the
last one departs. Written the way SimPy's documentation writes queues
(a source process, one process per customer, a Resource as the server).

Events are counted as in the Rust model: one arrival and one departure per
customer (2 x CUSTOMERS), whatever SimPy schedules internally to get there.
Output uses the same "key  value" lines as the example, for bench/kernel.sh.

Usage: md1_simpy.py [CUSTOMERS] [RUNS]   (defaults 1000000 and 1)
"""

import random
import sys
import time

import simpy

MEAN_INTERARRIVAL_US = 1250.0
SERVICE_US = 1000.0
SEED = 0x4C494E4B


class Counters:
    """Model events popped and the waiting-time sum."""

    def __init__(self):
        self.events = 0
        self.waits = 0
        self.wait_sum_us = 0.0


def customer(env, server, counters):
    arrived = env.now
    with server.request() as request:
        yield request
        counters.waits += 1
        counters.wait_sum_us += env.now - arrived
        yield env.timeout(SERVICE_US)
    counters.events += 1  # departure


def source(env, server, counters, customers, rng):
    for _ in range(customers):
        yield env.timeout(rng.expovariate(1.0 / MEAN_INTERARRIVAL_US))
        counters.events += 1  # arrival
        env.process(customer(env, server, counters))


def simulate(customers):
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    counters = Counters()
    env.process(source(env, server, counters, customers, random.Random(SEED)))
    env.run()
    return counters


def positive(text, name):
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        sys.exit(f"md1_simpy: {name} must be a positive integer, got {text!r} "
                 "(usage: md1_simpy.py [CUSTOMERS] [RUNS])")
    return value


def main(argv):
    if len(argv) > 2:
        sys.exit("md1_simpy: too many arguments (usage: md1_simpy.py [CUSTOMERS] [RUNS])")
    customers = positive(argv[0], "CUSTOMERS") if argv else 1_000_000
    runs = positive(argv[1], "RUNS") if len(argv) > 1 else 1
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        counters = simulate(customers)
        seconds.append(time.perf_counter() - start)
    seconds.sort()
    median = seconds[len(seconds) // 2]
    rho = SERVICE_US / MEAN_INTERARRIVAL_US
    pk = rho * SERVICE_US / (2.0 * (1.0 - rho))
    print(f"model         M/D/1, rho = {rho}, D = {SERVICE_US:.0f} us, "
          f"{customers} customers, median of {runs} runs")
    print(f"engine        SimPy {simpy.__version__}, Python {sys.version.split()[0]}")
    print(f"events        {counters.events}")
    print(f"seconds       {median:.4f}")
    print(f"events/s      {counters.events / median:.0f}")
    print(f"mean wait     {counters.wait_sum_us / counters.waits:.1f} us "
          f"(Pollaczek-Khinchine {pk:.1f} us)")


if __name__ == "__main__":
    main(sys.argv[1:])
