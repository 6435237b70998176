/**
 * Who a task runs as, and acting as them: a job's Unix account resolved through the node's NSS
 * ({@link io.kairos.agent.account.Nss}: {@code getent passwd}, {@code getent initgroups}, so LDAP
 * and SSSD accounts work as local ones), the agent's decision to run, drop to or refuse an account
 * ({@link io.kairos.agent.account.TaskOwners}), and the privilege drop itself, util-linux {@code
 * setpriv} ({@link io.kairos.agent.account.Setpriv}), used to start tasks and to read their output
 * files with their owner's rights ({@link io.kairos.agent.account.OwnerReads}).
 *
 * <p>Nothing here writes a file or holds a secret; the kernel decides what an account may do.
 */
package io.kairos.agent.account;
