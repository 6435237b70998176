package io.kairos.protocol;

/** {@code POST /api/v1/tokens} (admin only): a bearer token for {@code user}. */
public record TokenRequest(String user, Boolean admin) {}
