package io.kairos.protocol;

/**
 * A Kairos user and the Unix account their jobs run as ({@code GET /api/v1/users}).
 *
 * @param unixUser the account on the nodes (resolved there through NSS: passwd, LDAP)
 * @param mapped true when an admin set it ({@code kairos users set}); false for the default: the
 *     same name, or for the bootstrap admin the server's {@code --admin-runs-as}
 */
public record UserView(String name, String unixUser, boolean mapped) {}
