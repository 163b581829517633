mod proxy;
