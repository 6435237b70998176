package io.kairos.protocol;

/** The new token, shown once; the controller keeps only its hash. */
public record TokenCreated(String token, String user, boolean admin) {}
