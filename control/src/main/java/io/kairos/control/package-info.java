/**
 * The controller: one replica of Kairos' replicated state (Apache Ratis), the REST API, the
 * scheduler loop that runs the core on the leader, and the agent protocol's server side. {@link
 * io.kairos.control.Controller} wires the parts; each subpackage owns one of them.
 */
package io.kairos.control;
