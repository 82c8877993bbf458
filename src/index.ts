/** Worker entry: the gateway app (and, as they arrive, its Durable Object classes). */
import { newApp } from './app';

export default newApp();
