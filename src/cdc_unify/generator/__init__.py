"""The workload generator: the test oracle for every dialect.

`workload` simulates the source database, `truth` computes its state and history,
`encoders.<dialect>` write the workload as each CDC tool would, `faults` delivers the
messages as Kafka would (partitions, duplicates, late batch, malformed messages), and
`run.generate` writes it all to disk.  docs/generator.md describes the whole.
"""

# Bump when the same seed would give different output files.
GENERATOR_VERSION = "1.0.0"
