package io.kairos.cli;

/** Bad input from the user: printed as one line, exit code 2, no stack trace. */
final class UsageException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  UsageException(String message) {
    super(message);
  }
}
