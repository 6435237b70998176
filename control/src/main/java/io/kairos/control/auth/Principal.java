package io.kairos.control.auth;

/** Who made a request: a user (maybe an admin) or an agent. */
public record Principal(String user, String role) {
  public boolean isAdmin() {
    return "admin".equals(role);
  }

  public boolean isAgent() {
    return "agent".equals(role);
  }
}
