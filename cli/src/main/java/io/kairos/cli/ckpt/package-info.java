/**
 * Kairos' checkpoint protocol from the outside: reading and writing checkpoints in a directory or
 * in S3-compatible object storage ({@link io.kairos.cli.ckpt.CheckpointStore}), the rule that a
 * checkpoint without its manifest does not exist ({@link io.kairos.cli.ckpt.Manifests}), and a
 * writer for the throughput bench ({@link io.kairos.cli.ckpt.CheckpointWriter}). The same protocol
 * as {@code python/kairos_ckpt.py}, which the jobs use.
 */
package io.kairos.cli.ckpt;
