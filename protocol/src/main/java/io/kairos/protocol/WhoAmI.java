package io.kairos.protocol;

/** {@code GET /api/v1/whoami}: who the presented token belongs to. */
public record WhoAmI(String user, boolean admin) {}
