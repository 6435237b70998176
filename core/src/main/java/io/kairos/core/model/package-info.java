/**
 * Immutable model records: ids, job and gang specs, nodes, GPUs and topology. Constructors
 * validate, so an invalid value cannot exist. Depends on nothing else in Kairos.
 */
package io.kairos.core.model;
