/**
 * Kairos as a kube-scheduler extender ({@code /api/v1/k8s-extender/}): the wire types of {@code
 * k8s.io/kube-scheduler/extender/v1}, the few {@code core/v1} fields it reads, and {@link
 * io.kairos.control.k8s.K8sExtender}, which filters, prioritizes, binds and preempts GPU pods
 * against a leader-local ledger and places gangs all-or-nothing with the core's {@code GangPlacer}.
 *
 * <p>Design note. kube-scheduler stays the scheduler of record: it runs its own plugins, picks the
 * node and evicts victims; Kairos narrows and orders its choices for pods that ask for {@code
 * nvidia.com/gpu}. The ledger is soft state (what Kairos bound, or what the API server lists), not
 * a log entry: the cluster's truth is the API server, and a new leader rebuilds from it. No HTTP
 * handling here (the routes live in {@code io.kairos.control.api}); the only I/O is {@link
 * io.kairos.control.k8s.KubeApi}'s calls to the API server.
 */
package io.kairos.control.k8s;
