package io.kairos.protocol;

/** The reply to a submit: the new job's id (201 Created). Batch submits reply with a list. */
public record SubmitResult(long id) {}
