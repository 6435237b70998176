package io.kairos.control.state;

/**
 * One resize of an elastic job, in its history.
 *
 * @param atMs when it was decided (a grow: its tasks start) or completed (a shrink: the leaving
 *     tasks have ended)
 * @param attempt the attempt it resized
 * @param fromNodes live nodes before
 * @param toNodes live nodes after
 * @param why for people, e.g. "grew into idle nodes" or "shrank for job 12"
 */
public record ResizeEntry(long atMs, int attempt, int fromNodes, int toNodes, String why) {}
