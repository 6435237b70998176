package io.kairos.protocol;

/**
 * The body of {@code PUT /api/v1/users/{name}}: the Unix account the user's jobs run as from now on
 * (jobs already submitted keep the one recorded at their submission).
 */
public record UserUpdate(String unixUser) {}
