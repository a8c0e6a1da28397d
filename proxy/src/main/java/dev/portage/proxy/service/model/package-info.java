/**
 * The service proxy's view of a cluster, shared by its data planes: Service ports with their
 * addresses, policies and endpoints ({@link dev.portage.proxy.service.model.ServicePort}), as read
 * from Kubernetes Services and EndpointSlices. Immutable values; no I/O.
 */
package dev.portage.proxy.service.model;
