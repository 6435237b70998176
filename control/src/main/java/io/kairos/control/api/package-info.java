/**
 * The REST API ({@code /api/v1}) on Javalin: thin {@code *Routes} classes that parse, check
 * authorization, call a service and map the result; one exception mapper turns every error into
 * {@code application/problem+json} naming the field and the fix. No scheduling logic here.
 */
package io.kairos.control.api;
