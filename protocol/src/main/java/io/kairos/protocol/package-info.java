/**
 * The wire records shared by the controller, the agent and the CLI: REST request and response
 * bodies ({@code /api/v1}) and the agent protocol (register, heartbeat, assignments). Records and
 * Jackson annotations only: no behaviour beyond defaults, no dependency on the core.
 */
package io.kairos.protocol;
