"""Measuring the served pipeline: labelled photos (`manifests`), their scoring (`scoring`) and its report
(`report`), where reading fails (`misreads`), and latency and throughput under load (`timing`, `plates bench`)."""
