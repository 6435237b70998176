package io.kairos.core.tenancy;

/**
 * What a job submitted to the queue gets when it does not say.
 *
 * @param account the account charged; {@code null}: the submitting user's own
 * @param priorityClass the name of a declared {@link PriorityClass}; {@code null}: priority 0
 */
public record QueueDefaults(String account, String priorityClass) {
  /** No defaults. */
  public static final QueueDefaults NONE = new QueueDefaults(null, null);
}
